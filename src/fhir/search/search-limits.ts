/** _count bounds (issue 3: default 20, at most 1000). */
export const defaultPageSize = 20;
export const maxPageSize = 1000;
/**
 * Resources _include and _revinclude add to one page, all parameters together (HAPI FHIR's
 * default too): past it the page carries the first ones and an OperationOutcome warning.
 */
export const maxIncludedPerPage = 1000;
