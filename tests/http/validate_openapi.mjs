// Validates an OpenAPI document (reflectd's GET /v1/openapi.json, saved to a file) with
// @seriousme/openapi-schema-validator, which checks it against the OpenAPI 3.1 JSON Schema and
// resolves every $ref. Usage: node validate_openapi.mjs FILE. Exit 0: valid; 1: the errors,
// printed one per line.
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';

const document = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const result = await new Validator().validate(document);
if (!result.valid) {
  for (const error of [].concat(result.errors)) console.log(JSON.stringify(error));
  process.exit(1);
}
console.log(`valid OpenAPI ${document.openapi}: ${Object.keys(document.paths).length} paths`);
