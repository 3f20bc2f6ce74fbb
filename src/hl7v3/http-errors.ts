import type { HttpErrorInfo, RenderedError } from '../platform/http/surface.ts';
import type { AcknowledgementDetail } from './ack/acknowledgement.ts';
import { answer, type AnswerKind } from './intake/answer.ts';
import { acceptedMediaTypes } from './media-types.ts';
import { defaultXmlLimits } from './xml/parse.ts';

/**
 * An HTTP-level failure on an HL7 v3 path as an MCCI_IN000002UV01, so a v3 sender only ever reads
 * acknowledgements: AR for "not you" (401 NS260) and "not now" (5xx INTERR), AE with a syntax
 * detail for a body this route cannot take (400, 413, 415). The HL7 origin's renderError can
 * hand /v3/ paths here.
 */
export function renderHl7v3Error(error: HttpErrorInfo): RenderedError {
  let kind: AnswerKind;
  let detail: AcknowledgementDetail;
  switch (error.statusCode) {
    case 401:
      kind = 'unsupported';
      detail = { typeCode: 'E', code: 'NS260', text: `unknown sender: ${error.message}` };
      break;
    case 413:
      kind = 'too-large';
      detail = { typeCode: 'E', code: 'SYN', text: `the body is larger than ${defaultXmlLimits.maxBytes} bytes` };
      break;
    case 415:
      kind = 'not-a-message';
      detail = { typeCode: 'E', code: 'SYN', text: `the Content-Type must be one of ${acceptedMediaTypes.join(', ')}` };
      break;
    default:
      if (error.statusCode >= 500) {
        kind = error.statusCode === 503 ? 'retry-later' : 'internal';
        const reference = error.statusCode === 503 ? '' : ` (request id ${error.requestId})`;
        detail = { typeCode: 'E', code: 'INTERR', text: `${error.message}${reference}` };
      } else {
        kind = 'not-a-message';
        detail = { typeCode: 'E', code: 'SYN', text: error.message };
      }
  }
  return { contentType: 'application/xml; charset=utf-8', body: answer(kind, undefined, [detail]).ackXml };
}
