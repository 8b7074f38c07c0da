from bench import backtracker, catalogue, dungeons, rewrite

backtracker.main()
catalogue.main()
rewrite.main()
dungeons.main()
