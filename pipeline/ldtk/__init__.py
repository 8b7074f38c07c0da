"""LDtk projects (https://ldtk.io): one `.ldtkl` level file per map, written by `export.ldtk`,
and the `.ldtk` project that lists them, written once per pack when its maps are."""

# The JSON format written: that of LDtk 1.5.3, whose schema the tests validate against.
JSON_VERSION = "1.5.3"
APP_BUILD_ID = 473702  # LDtk 1.5.3's build id, as its own files carry it
HEADER = {
    "fileType": "LDtk Project JSON",
    "app": "LDtk",
    "doc": "https://ldtk.io/json",
    "schema": "https://ldtk.io/files/JSON_SCHEMA.json",
    "appAuthor": "Sebastien 'deepnight' Benard",
    "appVersion": JSON_VERSION,
    "url": "https://ldtk.io",
}
