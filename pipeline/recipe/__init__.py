"""Recipes: the model of a pack and its stages (`model`), loading and checking recipe files
(`load`, with the checks that read across stages: `stat_checks`, `object_tiles`), the JSON
schema editors read (`schema`), the edits commands make to recipe text (`toml_edit`, `pins`),
the order recipes that read each other's packs build in (`order`), and the plugin files a
recipe names, loaded as stage kinds (`plugins`)."""
