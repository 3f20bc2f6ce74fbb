/** The media types of HL7 v3 XML (RFC 7303 application/xml and text/xml; HL7's own registration). */
export const hl7v3MediaTypes = ['application/xml', 'text/xml', 'application/hl7-v3+xml'] as const;

/** SOAP 1.2 (RFC 3902), the transport of IHE's HL7 v3 web services. */
export const soapMediaType = 'application/soap+xml';

/** Every media type POST /v3/ingest reads. */
export const acceptedMediaTypes = [...hl7v3MediaTypes, soapMediaType] as const;

/** True when the request's Content-Type is SOAP 1.2. */
export function isSoapContentType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === soapMediaType;
}
