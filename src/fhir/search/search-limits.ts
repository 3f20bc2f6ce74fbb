/** _count bounds (issue 3: default 20, at most 1000). */
export const defaultPageSize = 20;
export const maxPageSize = 1000;
