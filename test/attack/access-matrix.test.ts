// Every row of the access table x every credential kind x every account state, over real HTTP against
// the real server, each cell's answer the one the table promises (test/helpers/access-matrix.ts).
import { defineAccessMatrix } from '../helpers/access-matrix.js';

defineAccessMatrix({ isTwoFactorRequiredOfAdministrators: false });
