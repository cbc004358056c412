// One session as a person reads it, on the account page and the users page alike
// (docs/contract/links-and-sessions.md): the browser's name, "this browser" on the one asking, then
// where it signed in from and how, and when it was last seen ("active now" for this browser, whose
// own request is the one asking; others to the hour, as the server writes it). Two browsers of one
// kind are told apart by these. Its style; browser/session-entry.ts draws it.

export const SESSION_ENTRY_STYLE = `
.here{display:inline-block;margin-left:.5rem;padding:.05rem .5rem;border-radius:999px;background:#e6f4ea;color:#1e5b2f;font-size:.8rem;font-weight:400}
@media (prefers-color-scheme:dark){.here{background:#1d3b26;color:#d3f5dc}}
`;
