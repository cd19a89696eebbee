// What every framework script shares: the three calls a scripted model
// makes, and how a script reports what it found.

// The calls the scripted model makes, one per run of the framework's tool
// loop: a quote (a string result), a doorbell that does not exist (a tool
// error with a hint and a retry delay), and a quote to a country that is
// not a two-letter code (invalid input: the schema's pattern).
export const calls = {
  quote: { tool: 'Shipping_Quote', input: { to: { country: 'FR' }, speed: 'express', parcels: 2 } },
  error: { tool: 'Doorbell_Ring', input: { doorbell_id: 'doorbell1' } },
  invalid: { tool: 'Shipping_Quote', input: { to: { country: 'france' }, parcels: 2 } },
};

// report prints the findings as one JSON line, the script's whole output.
export function report(findings) {
  process.stdout.write(JSON.stringify(findings) + '\n');
}

// The URL of the MCP endpoint, the script's one argument.
export const url = process.argv[2];
if (!url) {
  console.error('usage: node SCRIPT MCP_URL');
  process.exit(2);
}
