from pipeline.commands.app import main

main()
