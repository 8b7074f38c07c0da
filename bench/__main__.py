from bench import backtracker, catalogue, dungeons, rewrite, scale

backtracker.main()
catalogue.main()
rewrite.main()
dungeons.main()
scale.main()
