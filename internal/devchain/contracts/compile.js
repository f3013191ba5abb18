// Compiles Traffic.sol with solc-js (offline) into Traffic.json: the ABI and
// creation bytecode of each contract. Run through scripts/compile-contracts.
const fs = require('fs');
const path = require('path');
const solc = require('solc');

const dir = __dirname;
const input = {
  language: 'Solidity',
  sources: { 'Traffic.sol': { content: fs.readFileSync(path.join(dir, 'Traffic.sol'), 'utf8') } },
  settings: {
    evmVersion: 'cancun',
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.methodIdentifiers'] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors || []).filter((e) => e.severity === 'error');
if (errors.length) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
const result = { compiler: solc.version(), contracts: {} };
for (const [name, c] of Object.entries(out.contracts['Traffic.sol'])) {
  result.contracts[name] = {
    bytecode: '0x' + c.evm.bytecode.object,
    methods: c.evm.methodIdentifiers,
  };
}
fs.writeFileSync(path.join(dir, 'Traffic.json'), JSON.stringify(result, null, 2) + '\n');
console.log('wrote Traffic.json with', Object.keys(result.contracts).join(', '));
