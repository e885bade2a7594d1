/**
 * Fields the API takes that a published schema file predates. Each addition is applied only when the loaded schema
 * lacks the field (a newer schema placed beside it wins), is listed in the test output, and names its evidence.
 * Keep this list short: an addition is a claim about the live API that the schema could not confirm.
 */

type Node = Record<string, unknown>;

export interface SchemaAddition {
  family: 'openai' | 'anthropic' | 'gemini';
  /** `components.schemas` name, then the property path to the object whose `properties` gets the key. */
  schema: string;
  path: string[];
  key: string;
  value: Node;
  evidence: string;
}

export const SCHEMA_ADDITIONS: readonly SchemaAddition[] = [
  {
    family: 'gemini',
    schema: 'GenerationConfig',
    path: ['thinkingConfig'],
    key: 'thinkingLevel',
    value: { type: 'string', enum: ['THINKING_LEVEL_UNSPECIFIED', 'MINIMAL', 'LOW', 'MEDIUM', 'HIGH'] },
    evidence:
      'Gemini 3 thinking levels: @google/genai 3.3.0 (devDependency) ThinkingConfig.thinkingLevel (enum ThinkingLevel), ' +
      'sent unchanged in generationConfig.thinkingConfig by generateContent on the Gemini Developer API; the transcribed ' +
      'v1beta content.proto (googleapis f8291d2b) predates the field.',
  },
];

/** Apply the additions of `family` that `doc` lacks (mutates); returns the ones applied. */
export function applySchemaAdditions(family: SchemaAddition['family'], doc: Node): SchemaAddition[] {
  const applied: SchemaAddition[] = [];
  const schemas = ((doc.components as Node | undefined)?.schemas ?? {}) as Record<string, Node>;
  for (const addition of SCHEMA_ADDITIONS) {
    if (addition.family !== family) continue;
    let node: Node | undefined = schemas[addition.schema];
    for (const step of addition.path) node = (node?.properties as Record<string, Node> | undefined)?.[step];
    const properties = node?.properties as Node | undefined;
    if (!properties)
      throw new Error(`schema addition ${addition.schema}.${addition.path.join('.')}: no such object`);
    if (addition.key in properties) continue;
    properties[addition.key] = addition.value;
    applied.push(addition);
  }
  return applied;
}
