// The access matrix (test/attack/access-matrix.test.ts) under --require-mfa-for-admins: an
// administrator's one-factor session counts as none on the rows that say so. A user's cells are the
// same with or without the setting and run once, there; an administrator's run here again on every row
// (test/helpers/access-plan.ts).
import { defineAccessMatrix } from '../helpers/access-matrix.js';

defineAccessMatrix({ isTwoFactorRequiredOfAdministrators: true });
