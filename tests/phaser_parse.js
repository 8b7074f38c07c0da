// Parses Tiled JSON maps with Phaser 3's own parser (ParseJSONTiled, what this.load.tilemapTiledJSON
// runs), in Node, and prints what Phaser made of them as JSON: layers with their tile indexes,
// tilesets with their tile properties, objects, and every warning Phaser printed.
// Usage: PHASER_DIR=.../node_modules/phaser node phaser_parse.js MAP.tmj...
'use strict';
const fs = require('fs');
const path = require('path');

// Phaser's device detection runs when its modules load and reads the browser's globals; the map
// parser uses none of them, so inert stand-ins are enough.
const context = () => new Proxy({}, {
  get: (target, key) => (key in target ? target[key] : () => ({ data: new Uint8ClampedArray(16) })),
  set: (target, key, value) => ((target[key] = value), true),
});
const element = () => ({ getContext: context, style: {}, addEventListener() {}, setAttribute() {} });
Object.assign(globalThis, {
  navigator: { userAgent: 'node', maxTouchPoints: 0 },
  window: globalThis,
  document: { createElement: element, documentElement: { style: {} }, addEventListener() {} },
  Image: function Image() {},
  HTMLCanvasElement: function HTMLCanvasElement() {},
});

const ParseJSONTiled = require(path.join(process.env.PHASER_DIR, 'src/tilemaps/parsers/tiled/ParseJSONTiled.js'));
const version = require(path.join(process.env.PHASER_DIR, 'package.json')).version;

const maps = {};
for (const file of process.argv.slice(2)) {
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => warnings.push(args.join(' '));
  const map = ParseJSONTiled(path.basename(file), JSON.parse(fs.readFileSync(file, 'utf8')), false);
  console.warn = warn;
  maps[file] = {
    warnings,
    layers: map.layers.map((l) => ({ name: l.name, visible: l.visible, properties: l.properties, indexes: l.data.map((row) => row.map((t) => t.index)) })),
    tilesets: map.tilesets.map((t) => ({ name: t.name, firstgid: t.firstgid, tileProperties: t.tileProperties })),
    objects: map.objects.map((g) => ({
      name: g.name,
      objects: g.objects.map((o) => ({ name: o.name, type: o.type, gid: o.gid || 0, point: !!o.point, rectangle: !!o.rectangle, polyline: o.polyline || null, properties: o.properties || [] })),
    })),
  };
}
process.stdout.write(JSON.stringify({ version, maps }));
