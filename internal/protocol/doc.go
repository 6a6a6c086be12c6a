// Package protocol names a layer, and holds no code of its own: the
// packages below it are shared by frame and message and stand above the
// codec (stream, encode). The folders of internal/ say which layer each
// package belongs to:
//
//   - internal/wire: the byte rules beneath everything (the code table,
//     widths, sizes, UTF-8 checks) that dispatch, stream and encode call;
//     it imports nothing of this module but the root package.
//   - internal/protocol/composite: the spec's composite types (a table of
//     fields read and written through stream and encode), which frame
//     and message share.
//   - internal/cases, corpus, peers, resource, trace: test support only.
package protocol
