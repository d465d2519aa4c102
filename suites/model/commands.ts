/**
 * The model's command list: the commands of model.ts and those of each resource's file
 * (files.ts, personal.ts, passwords.ts, favorites.ts; users.ts, groups.ts, projects.ts,
 * custom-fields.ts, log.ts), one list the property draws from (README.md here), all in the same
 * command budget.
 */
import type fc from 'fast-check';
import { customFieldsCommand } from './custom-fields.ts';
import { favoriteCommands } from './favorites.ts';
import { fileCommands } from './files.ts';
import { groupCommand } from './groups.ts';
import { logAccessCommand } from './log.ts';
import { commandArbitraries, type Step } from './model.ts';
import { passwordCommands } from './passwords.ts';
import { personalCommands } from './personal.ts';
import { subprojectCommand } from './projects.ts';
import { accountCommand } from './users.ts';

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
    ...[accountCommand(), accountCommand()],
    ...[groupCommand(), subprojectCommand(), customFieldsCommand(), customFieldsCommand(), logAccessCommand()],
  ];
}
