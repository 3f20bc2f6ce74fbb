/**
 * Accept negotiation of WADO-RS frames (PS3.18 8.7.3.3, Table 8.7.3-5). A frame is sent as
 * stored, in one of two forms: its own media type (application/octet-stream for uncompressed
 * pixels, image/jpeg, image/jls... for compressed ones), or, for a compressed frame, the same bytes
 * as application/octet-stream with the transfer syntax named on the part. The second is what
 * viewers built on dicomweb-client and Cornerstone ask for by default
 * (`multipart/related; type="application/octet-stream"; transfer-syntax=*`), and what dcm4chee-arc
 * and Orthanc answer it with: `*` lets the origin choose the syntax, so the stored one is chosen.
 * Without `transfer-syntax`, application/octet-stream means Explicit VR Little Endian (PS3.18
 * 8.7.3.5.2), which a compressed frame is not: that stays a 406, as nothing is transcoded.
 */
import { HttpProblem } from '../platform/http/http-problem.ts';
import { parseAccept, transferSyntaxUids } from './media-types.ts';

const octetStream = 'application/octet-stream';

export interface FrameForm {
  /** The `type` of the multipart answer. */
  mediaType: string;
  /** Each part's Content-Type. */
  partContentType: string;
}

/**
 * The form the frames of an instance stored in `storedTransferSyntax` are sent in, given the
 * request's Accept; `nativeMediaType` is the stored syntax's own media type. 406 when none fits.
 */
export function acceptFrames(header: string | undefined, nativeMediaType: string, storedTransferSyntax: string): FrameForm {
  const compressed = nativeMediaType !== octetStream;
  const native: FrameForm = { mediaType: nativeMediaType, partContentType: compressed ? `${nativeMediaType}; transfer-syntax=${storedTransferSyntax}` : octetStream };
  for (const range of parseAccept(header)) {
    if (range.type === '*/*' || range.type === 'multipart/*') return native;
    if (range.type !== 'multipart/related') continue;
    const type = (range.parameters.type ?? nativeMediaType).toLowerCase();
    const asked = range.parameters['transfer-syntax'];
    // Uncompressed frames are sent little endian whatever the instance is stored in, and their
    // bytes are the same in either little endian syntax.
    const nativeSyntaxes: readonly string[] = compressed ? [storedTransferSyntax] : [transferSyntaxUids.explicitLittle, transferSyntaxUids.implicitLittle];
    if (type === nativeMediaType && (asked === undefined || asked === '*' || nativeSyntaxes.includes(asked))) return native;
    if (type === octetStream && compressed && (asked === '*' || asked === storedTransferSyntax)) {
      return { mediaType: octetStream, partContentType: `${octetStream}; transfer-syntax=${storedTransferSyntax}` };
    }
  }
  const offered = compressed
    ? `multipart/related; type="${nativeMediaType}", or type="${octetStream}" with transfer-syntax=* or ${storedTransferSyntax}`
    : `multipart/related; type="${octetStream}"`;
  throw new HttpProblem(406, 'not-acceptable', `the frames of this instance are available as ${offered} only (they are not transcoded)`);
}
