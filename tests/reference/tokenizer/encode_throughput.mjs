// Peer for bench/tokenizer.bench.sh: times @lenml/tokenizers encoding every {"text"} record of a
// JSONL file with a tokenizer.json, one document per call, and prints peer_encode_mbps[NAME]=X.
//   node encode_throughput.mjs --tokenizer T.json --input corpus.jsonl --name NAME
import fs from "node:fs";
import { TokenizerLoader } from "@lenml/tokenizers";

const arg = (n) => process.argv[process.argv.indexOf(n) + 1];
const json = JSON.parse(fs.readFileSync(arg("--tokenizer"), "utf8"));
const tok = TokenizerLoader.fromPreTrained({
  tokenizerJSON: json,
  tokenizerConfig: { tokenizer_class: "PreTrainedTokenizerFast", add_bos_token: false, add_eos_token: false },
});
const docs = fs.readFileSync(arg("--input"), "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l).text);
const bytes = docs.reduce((a, d) => a + Buffer.byteLength(d, "utf8"), 0);
for (const d of docs.slice(0, 200)) tok.encode(d, { add_special_tokens: false }); // JIT warm-up
const t0 = process.hrtime.bigint();
let tokens = 0;
for (const d of docs) tokens += tok.encode(d, { add_special_tokens: false }).length;
const s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`peer encode [${arg("--name")}]: ${(bytes / 1e6 / s).toFixed(1)} MB/s (1 thread, node ${process.version}), ${tokens} tokens`);
console.log(`peer_encode_mbps[${arg("--name")}]=${(bytes / 1e6 / s).toFixed(3)}`);
