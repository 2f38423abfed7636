// face-api's own AgeGenderNet on tfjs's pure-JS CPU backend, for bench/age_network_crosscheck.py.
// Usage: node check.js FACES.f32 COUNT OUT.json  (FACES: COUNT x 112 x 112 x 3 float32, RGB 0..255)
const fs = require('fs');
const path = require('path');
const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js');

async function main() {
  const [input, count, output] = process.argv.slice(2);
  await faceapi.tf.setBackend('cpu');
  await faceapi.tf.ready();
  const modelDir = path.join(path.dirname(require.resolve('@vladmandic/face-api/package.json')), 'model');
  await faceapi.nets.ageGenderNet.loadFromDisk(modelDir);
  const bytes = fs.readFileSync(input);
  const n = Number(count);
  const faces = faceapi.tf.tensor4d(new Float32Array(bytes.buffer, bytes.byteOffset, n * 112 * 112 * 3), [n, 112, 112, 3]);
  // A list of 112x112 tensors: toBatchTensor neither pads nor resizes them.
  const out = faceapi.nets.ageGenderNet.forwardInput(await faceapi.toNetInput(faceapi.tf.unstack(faces)));
  fs.writeFileSync(output, JSON.stringify({
    backend: faceapi.tf.getBackend(),
    tfjs: faceapi.tf.version_core,
    faceapi: faceapi.version,
    age: Array.from(await out.age.data()),
    gender: Array.from(await out.gender.data()),
  }));
}

main().catch((error) => { console.error(error); process.exit(1); });
