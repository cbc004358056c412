// The access matrix (test/helpers/access-matrix.ts) under --require-mfa-for-admins: an administrator's
// one-factor session counts as none on the rows that say so.
import { defineAccessMatrix } from '../helpers/access-matrix.js';

defineAccessMatrix({ isTwoFactorRequiredOfAdministrators: true });
