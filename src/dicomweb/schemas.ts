/** OpenAPI pieces of the DICOMweb origin's routes (documentation; the handlers check inputs). */
export function errorSchema(description: string) {
  return {
    description,
    type: 'object',
    properties: { error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } }, required: ['code', 'message'] } },
  } as const;
}

const binary = (description: string, mediaType: string) => ({ description, content: { [mediaType]: { schema: { type: 'string', format: 'binary' } } } });

export function wadoResponses(mediaType: string) {
  return {
    200: binary('The resource', mediaType),
    400: errorSchema('A UID or frame number is malformed'),
    401: errorSchema('Missing, unknown or revoked API key'),
    404: errorSchema("Not found in the key's site"),
    406: errorSchema('The Accept header names nothing this resource is available as'),
    503: errorSchema('Database unavailable: retry later'),
  };
}

export const dicomJsonArray = { type: 'array', items: { type: 'object', additionalProperties: true } } as const;
