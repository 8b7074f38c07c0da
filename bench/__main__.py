from bench.backtracker import main

main()
