from bench import backtracker, catalogue

backtracker.main()
catalogue.main()
