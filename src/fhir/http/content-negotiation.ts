import type { FastifyRequest } from 'fastify';
import { HttpProblem } from '../../platform/http/http-problem.ts';

/**
 * Formats (https://hl7.org/fhir/R4/http.html#mime-type): this server produces JSON only, as
 * application/fhir+json. _format overrides Accept; either asking for something else is a 406.
 * Request bodies must be application/fhir+json or application/json, else 415.
 */

const jsonFormats = new Set(['json', 'application/json', 'application/fhir+json', 'application/json+fhir']);
// text/json is one of the generic types http.html#mime-type says a server answers in JSON.
const acceptableRanges = new Set(['*/*', 'application/*', 'application/json', 'application/fhir+json', 'application/json+fhir', 'text/json']);

/**
 * http.html#version-parameter: `fhirVersion` names the FHIR release of the whole interaction;
 * this server speaks R4 (4.0, or a patch release such as 4.0.1) and nothing else, so another
 * release asked for is refused rather than answered in R4 to a client that would misread it.
 */
function speaksVersion(parameters: string[]): boolean {
  const version = parameters.find((parameter) => parameter.startsWith('fhirversion='));
  return version === undefined || /^"?4\.0(\.\d+)?"?$/.test(version.slice('fhirversion='.length));
}

/** A media type and its parameters, lower-cased: `application/fhir+json; fhirVersion=4.0`. */
function mediaType(value: string): { type: string; parameters: string[] } {
  const [type, ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  return { type: type ?? '', parameters: parameters.map((parameter) => parameter.replace(/\s*=\s*/, '=')) };
}

export function assertAcceptable(request: FastifyRequest): void {
  const format = new URLSearchParams(request.url.split('?')[1] ?? '').get('_format');
  if (format !== null) {
    const { type, parameters } = mediaType(format);
    // An unencoded "+" (application/fhir+json) arrives as a space.
    if (!jsonFormats.has(type.replace(' ', '+')) || !speaksVersion(parameters)) {
      throw new HttpProblem(406, 'not-acceptable', `_format ${JSON.stringify(format)} is not supported: this server produces FHIR R4 JSON only`);
    }
    return;
  }
  const accept = request.headers.accept;
  if (accept === undefined || accept.trim() === '') return;
  const ok = accept.split(',').some((range) => {
    const { type, parameters } = mediaType(range);
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) return false;
    return acceptableRanges.has(type) && speaksVersion(parameters);
  });
  if (!ok) {
    throw new HttpProblem(406, 'not-acceptable', `cannot produce any of ${JSON.stringify(accept)}: this server produces application/fhir+json (FHIR R4)`);
  }
}

export function assertJsonBody(request: FastifyRequest): void {
  const { type, parameters } = mediaType(request.headers['content-type'] ?? '');
  if (type !== 'application/fhir+json' && type !== 'application/json' && type !== 'application/json+fhir') {
    throw new HttpProblem(
      415,
      'unsupported-media-type',
      `Content-Type ${JSON.stringify(request.headers['content-type'] ?? '')} is not supported: send application/fhir+json`,
    );
  }
  // FHIR JSON is UTF-8 (http.html#mime-type): a body declared in another charset would be misread.
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpProblem(415, 'unsupported-media-type', `Content-Type ${JSON.stringify(request.headers['content-type'])}: FHIR JSON is UTF-8; send the body in UTF-8`);
  }
  if (!speaksVersion(parameters)) {
    throw new HttpProblem(415, 'unsupported-media-type', `Content-Type ${JSON.stringify(request.headers['content-type'])} names another FHIR release: this server takes FHIR R4 (fhirVersion=4.0)`);
  }
}
