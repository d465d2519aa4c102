/**
 * The model's command list: the commands of model.ts and those of each resource's file
 * (files.ts, personal.ts, passwords.ts, favorites.ts), one list the property draws from (README.md here).
 */
import type fc from 'fast-check';
import { favoriteCommands } from './favorites.ts';
import { fileCommands } from './files.ts';
import { commandArbitraries, type Step } from './model.ts';
import { passwordCommands } from './passwords.ts';
import { personalCommands } from './personal.ts';

export function allCommands(): Array<fc.Arbitrary<Step>> {
  return [
    ...commandArbitraries(),
    ...passwordCommands(),
    ...passwordCommands(),
    ...fileCommands(),
    ...fileCommands(),
    ...personalCommands(),
    ...personalCommands(),
    ...favoriteCommands(),
  ];
}
