import { XMLBuilder } from 'fast-xml-parser';
import type { XmlElement } from '../xml/element.ts';

/**
 * SOAP 1.2 with WS-Addressing, the web-services transport IHE specifies for its HL7 v3
 * transactions (ITI TF-2 Appendix V; ITI-44 actions urn:hl7-org:v3:PRPA_IN2013xxUV02 in,
 * urn:hl7-org:v3:MCCI_IN000002UV01 out). A PIX/PDQ V3 source posts the message inside an
 * Envelope; this service answers with the acknowledgement inside one, related to the request's
 * wsa:MessageID. The HL7 v3 content is the same either way.
 */
export const soap12Namespace = 'http://www.w3.org/2003/05/soap-envelope';
export const soap11Namespace = 'http://schemas.xmlsoap.org/soap/envelope/';
export const wsaNamespace = 'http://www.w3.org/2005/08/addressing';

export type Unwrapped =
  | { kind: 'plain' }
  | { kind: 'soap'; message: XmlElement | undefined; messageId: string | undefined }
  | { kind: 'soap11' };

/** The HL7 v3 message inside a SOAP 1.2 Body (its first element), and the request's wsa:MessageID. */
export function unwrapSoap(root: XmlElement): Unwrapped {
  if (root.name !== 'Envelope') return { kind: 'plain' };
  if (root.namespace === soap11Namespace) return { kind: 'soap11' };
  if (root.namespace !== soap12Namespace) return { kind: 'plain' };
  const soapChild = (parent: XmlElement | undefined, name: string) => parent?.children.find((c) => c.name === name && c.namespace === soap12Namespace);
  const header = soapChild(root, 'Header');
  const messageId = header?.children.find((c) => c.name === 'MessageID' && c.namespace === wsaNamespace)?.text.trim();
  return { kind: 'soap', message: soapChild(root, 'Body')?.children[0], messageId: messageId || undefined };
}

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', textNodeName: '#text', format: true, indentBy: '  ', suppressBooleanAttributes: false });

/** The acknowledgement (an XML document) as the Body of a SOAP 1.2 response. */
export function wrapInSoap(ackXml: string, relatesTo: string | undefined): string {
  const header = builder.build({
    'soap:Header': {
      'wsa:Action': { '@soap:mustUnderstand': 'true', '#text': 'urn:hl7-org:v3:MCCI_IN000002UV01' },
      ...(relatesTo ? { 'wsa:RelatesTo': relatesTo } : {}),
    },
  });
  const body = ackXml.replace(/^<\?xml[^?]*\?>\s*/, '');
  return `<?xml version="1.0" encoding="UTF-8"?>
<soap:Envelope xmlns:soap="${soap12Namespace}" xmlns:wsa="${wsaNamespace}">
${header.trimEnd()}
<soap:Body>
${body.trimEnd()}
</soap:Body>
</soap:Envelope>
`;
}
