from bench import backtracker, catalogue, rewrite

backtracker.main()
catalogue.main()
rewrite.main()
