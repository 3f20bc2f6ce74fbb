import { SaxesParser, type SaxesTagNS } from 'saxes';
import { decodeXmlBytes } from './decode.ts';
import type { XmlElement } from './element.ts';
import { XmlRejection } from './rejection.ts';

export interface XmlLimits {
  /** Bytes of the whole document. */
  maxBytes: number;
  /** Element nesting depth (a PIX feed nests about 12 deep). */
  maxDepth: number;
  /** Elements in the whole document. */
  maxElements: number;
  /** Attributes on one element. */
  maxAttributes: number;
}

export const defaultXmlLimits: XmlLimits = {
  maxBytes: 1024 * 1024,
  maxDepth: 64,
  maxElements: 20_000,
  maxAttributes: 64,
};

interface OpenElement {
  name: string;
  namespace: string;
  attributes: Map<string, string>;
  children: XmlElement[];
  text: string;
  line: number;
  path: string;
  siblingCounts: Map<string, number>;
}

/**
 * Parses an XML document safely, with saxes (a strict XML 1.0 + Namespaces parser that never
 * reads external resources and expands only the five predefined entities and character
 * references).
 *
 * - Any document type declaration is refused before parsing starts: with no DTD there is no
 *   entity to declare, so XXE and "billion laughs" expansion cannot happen (OWASP XXE Prevention
 *   Cheat Sheet: "disable DTDs completely"). The parser's own doctype event is a second guard.
 * - Size, depth, element and attribute counts are bounded while parsing, so memory is bounded by
 *   the body size however the document is shaped, and the tree is built without recursion.
 */
export function parseXml(bytes: Uint8Array, limits: XmlLimits = defaultXmlLimits, charset?: string): XmlElement {
  if (bytes.length > limits.maxBytes) {
    throw new XmlRejection('too-large', `the document is ${bytes.length} bytes; the limit is ${limits.maxBytes}`);
  }
  const text = decodeXmlBytes(bytes, charset);
  const doctypeAt = text.indexOf('<!DOCTYPE');
  if (doctypeAt !== -1) throw new XmlRejection('doctype', 'a document type declaration (DOCTYPE) is not allowed', positionOf(text, doctypeAt));

  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: OpenElement[] = [];
  let root: XmlElement | undefined;
  let elements = 0;
  const where = () => ({ line: parser.line, column: parser.column });

  parser.on('doctype', () => {
    throw new XmlRejection('doctype', 'a document type declaration (DOCTYPE) is not allowed', where());
  });
  parser.on('opentagstart', () => {
    elements += 1;
    if (stack.length + 1 > limits.maxDepth) {
      throw new XmlRejection('too-deep', `elements are nested more than ${limits.maxDepth} deep`, where());
    }
    if (elements > limits.maxElements) {
      throw new XmlRejection('too-many-nodes', `the document has more than ${limits.maxElements} elements`, where());
    }
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    const attributes = new Map<string, string>();
    let count = 0;
    for (const attr of Object.values(tag.attributes)) {
      if (++count > limits.maxAttributes) {
        throw new XmlRejection('too-many-nodes', `an element has more than ${limits.maxAttributes} attributes`, where());
      }
      // Namespace declarations are structure, not data.
      if (attr.prefix === 'xmlns' || (attr.prefix === '' && attr.local === 'xmlns')) continue;
      attributes.set(attr.uri ? `{${attr.uri}}${attr.local}` : attr.local, attr.value);
    }
    const parent = stack.at(-1);
    let path = `/${tag.local}`;
    if (parent) {
      const index = (parent.siblingCounts.get(tag.local) ?? 0) + 1;
      parent.siblingCounts.set(tag.local, index);
      path = `${parent.path}/${tag.local}[${index}]`;
    }
    stack.push({
      name: tag.local,
      namespace: tag.uri,
      attributes,
      children: [],
      text: '',
      line: parser.line,
      path,
      siblingCounts: new Map(),
    });
  });
  parser.on('text', (data) => {
    const current = stack.at(-1);
    if (current) current.text += data;
  });
  parser.on('cdata', (data) => {
    const current = stack.at(-1);
    if (current) current.text += data;
  });
  parser.on('closetag', () => {
    const open = stack.pop()!;
    const element: XmlElement = {
      name: open.name,
      namespace: open.namespace,
      attributes: open.attributes,
      children: open.children,
      text: open.text,
      line: open.line,
      path: open.path,
    };
    const parent = stack.at(-1);
    if (parent) parent.children.push(element);
    else root = element;
  });

  try {
    parser.write(text).close();
  } catch (error) {
    if (error instanceof XmlRejection) throw error;
    // saxes prefixes "line:column: " (and a file name when given one); the position is kept apart.
    const message = error instanceof Error ? error.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '') : 'not well-formed';
    throw new XmlRejection('malformed', `the body is not well-formed XML: ${message}`, where());
  }
  if (!root) throw new XmlRejection('malformed', 'the body is not well-formed XML: it has no root element');
  return root;
}

function positionOf(text: string, index: number): { line: number; column: number } {
  const before = text.slice(0, index);
  const line = before.split('\n').length;
  return { line, column: index - before.lastIndexOf('\n') };
}
