/** `npm run build:viewer` (and `npm ci`, through prepare): builds the study viewer's bundle now. */
import { ensureViewerBundle } from './viewer-bundle.ts';

const folder = await ensureViewerBundle();
console.log(`study viewer bundle ready in ${folder}`);
