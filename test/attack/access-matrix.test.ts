// The access matrix: every row of the access table x the credential kinds x the account states, over
// real HTTP against the real server, each cell's answer the one the written policy promises
// (test/policy/access-policy.ts, through test/helpers/access-model.ts). Not every combination: one cell
// of each class the policy tells apart (test/helpers/access-plan.ts says it in full). Of about 27,000
// combinations, about 1,300 are run under both settings:
// - credentials that open nothing on a row (none, an expired or revoked session, `?token=` where it does
//   not count, a machine token off the gate, a cookie another site sends or one sent to an app's origin
//   on a row answered only at home) are tried once each per row, not once per account;
// - the factors a cookie was made with are told apart only where the row asks for factors (or the
//   administrators' setting applies), the account's second factors only where the row's factors are
//   "two once enrolled", user and administrator only where the row asks for an administrator, the
//   setting applies or it is the gate; elsewhere the one cell most likely to show a mistake is run;
// - cells whose expected answers differ are never merged (a wrong password, another account's token).
// Deliberate breaks of the judge that the pruned matrix must catch are in scripts/mutations.mjs.
import { defineAccessMatrix } from '../helpers/access-matrix.js';

defineAccessMatrix({ isTwoFactorRequiredOfAdministrators: false });
