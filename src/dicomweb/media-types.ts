/**
 * Accept negotiation of the DICOMweb origin (PS3.18 8.7: media types; 8.7.3 transfer syntaxes).
 * Instances are sent as stored: pixel data is never transcoded, so an Accept that names a
 * transfer syntax other than the stored one (or "*") is a 406, except that uncompressed
 * instances convert to Explicit or Implicit VR Little Endian (wado-routes.ts).
 */
import { HttpProblem } from '../platform/http/http-problem.ts';

export interface MediaRange {
  type: string;
  /** Lower-case parameter names; values without quotes. */
  parameters: Record<string, string>;
}

/** Splits an Accept header into media ranges, ignoring q-values' order (every range is acceptable). */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || header.trim() === '') return [{ type: '*/*', parameters: {} }];
  return splitOutsideQuotes(header, ',').map((range) => {
    const [type = '', ...parameters] = splitOutsideQuotes(range, ';');
    const parsed: Record<string, string> = {};
    for (const parameter of parameters) {
      const at = parameter.indexOf('=');
      if (at > 0) parsed[parameter.slice(0, at).trim().toLowerCase()] = parameter.slice(at + 1).trim().replace(/^"(.*)"$/, '$1');
    }
    return { type: type.trim().toLowerCase(), parameters: parsed };
  });
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') quoted = !quoted;
    else if (!quoted && text[i] === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.filter((part) => part.trim() !== '');
}

function notAcceptable(offered: string): HttpProblem {
  return new HttpProblem(406, 'not-acceptable', `this resource is available as ${offered} only`);
}

/**
 * For a multipart/related answer whose parts are `partType`: the range that accepts it, with the
 * transfer-syntax it asks for ("*" when any). Throws 406 when none does.
 */
export function acceptMultipart(header: string | undefined, partTypes: readonly string[], offered: string): { partType: string; transferSyntax: string } {
  for (const range of parseAccept(header)) {
    const transferSyntax = range.parameters['transfer-syntax'] ?? '*';
    if (range.type === '*/*' || range.type === 'multipart/*') return { partType: partTypes[0]!, transferSyntax };
    if (range.type !== 'multipart/related') continue;
    const type = (range.parameters.type ?? partTypes[0]!).toLowerCase();
    if (partTypes.includes(type)) return { partType: type, transferSyntax };
  }
  throw notAcceptable(offered);
}

/**
 * For a list of datasets (QIDO-RS results, WADO-RS metadata): one JSON answer, application/dicom+json
 * or application/json; or `multipart/related; type="application/dicom+xml"`, one PS3.19 XML part
 * per dataset, the other form PS3.18 (10.6.3, 10.4.3) has an origin offer.
 */
export function acceptDatasetList(header: string | undefined): 'application/dicom+json' | 'application/json' | 'application/dicom+xml' {
  for (const range of parseAccept(header)) {
    if (['*/*', 'application/*', 'application/dicom+json'].includes(range.type)) return 'application/dicom+json';
    if (range.type === 'application/json') return 'application/json';
    if (range.type === 'multipart/related' && range.parameters.type?.toLowerCase() === 'application/dicom+xml') return 'application/dicom+xml';
  }
  throw notAcceptable('application/dicom+json or multipart/related; type="application/dicom+xml"');
}

/**
 * The STOW-RS response (PS3.18 10.5.3): DICOM JSON, or the Native DICOM Model XML for a user
 * agent that accepts only that. An Accept naming neither still gets JSON: by the time the answer
 * is written the instances are stored, and refusing to say so would only make the sender retry.
 */
export function stowResponseType(header: string | undefined): 'application/dicom+json' | 'application/dicom+xml' {
  for (const range of parseAccept(header)) {
    if (['*/*', 'application/*', 'application/dicom+json', 'application/json'].includes(range.type)) return 'application/dicom+json';
    if (range.type === 'application/dicom+xml') return 'application/dicom+xml';
  }
  return 'application/dicom+json';
}

export const transferSyntaxUids = {
  implicitLittle: '1.2.840.10008.1.2',
  explicitLittle: '1.2.840.10008.1.2.1',
  deflated: '1.2.840.10008.1.2.1.99',
  explicitBig: '1.2.840.10008.1.2.2',
} as const;

/** PS3.18 Table 8.7.3-5 (single-frame and multi-frame pixel data media types), by transfer syntax. */
export function frameMediaType(transferSyntaxUid: string): string | undefined {
  if ([transferSyntaxUids.implicitLittle, transferSyntaxUids.explicitLittle, transferSyntaxUids.explicitBig].includes(transferSyntaxUid as '1.2.840.10008.1.2')) return 'application/octet-stream';
  if (/^1\.2\.840\.10008\.1\.2\.4\.(50|51|57|70)$/.test(transferSyntaxUid)) return 'image/jpeg';
  if (/^1\.2\.840\.10008\.1\.2\.4\.(80|81)$/.test(transferSyntaxUid)) return 'image/jls';
  if (/^1\.2\.840\.10008\.1\.2\.4\.(90|91)$/.test(transferSyntaxUid)) return 'image/jp2';
  if (/^1\.2\.840\.10008\.1\.2\.4\.(92|93)$/.test(transferSyntaxUid)) return 'image/jpx';
  // High-Throughput JPEG 2000, which the listener stores (PS3.18 Table 8.7.3-5 as of 2023).
  if (/^1\.2\.840\.10008\.1\.2\.4\.20[123]$/.test(transferSyntaxUid)) return 'image/jphc';
  if (transferSyntaxUid === '1.2.840.10008.1.2.5') return 'image/dicom-rle';
  return undefined;
}
