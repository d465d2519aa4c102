#!/usr/bin/env node
// Entry of the pmv6 CLI: loads the TypeScript sources through tsx, then runs the command.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
