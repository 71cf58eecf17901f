/** The Session/Turn command set of the model-based test (fc.commands). */
import fc from 'fast-check'
import { commandsParams } from '../../support/fc.js'
import { AddTurnCommand } from './commands/add-turn.command.js'
import { AdvanceClockCommand } from './commands/advance-clock.command.js'
import { CancelTurnCommand } from './commands/cancel-turn.command.js'
import { CloseSessionCommand } from './commands/close-session.command.js'
import { CreateSessionCommand } from './commands/create-session.command.js'
import { DeleteSessionCommand } from './commands/delete-session.command.js'
import { ReadAllTurnsCommand } from './commands/read-all-turns.command.js'
import { ReadTurnCommand } from './commands/read-turn.command.js'
import { ResendCreateCommand } from './commands/resend-create.command.js'
import type { ScenarioName } from './world.js'

const index = fc.nat({ max: 1000 })
// Creates weigh double: waits for a Project slot (the third execution) are where time limits matter.
const createSession = fc
  .tuple(
    fc.constantFrom<ScenarioName>('slow', 'succeed', 'fail', 'slow'),
    fc.constantFrom(30, 600),
    fc.constantFrom(3600, 20, 3600),
  )
  .map(([s, q, e]) => new CreateSessionCommand(s, q, e))

export const sessionCommands = () =>
  fc.commands(
    [
      createSession,
      createSession,
      index.map((i) => new AddTurnCommand(i)),
      index.map((i) => new ReadTurnCommand(i)),
      fc.constant(new ReadAllTurnsCommand()),
      index.map((i) => new CancelTurnCommand(i)),
      index.map((i) => new CloseSessionCommand(i)),
      index.map((i) => new DeleteSessionCommand(i)),
      index.map((i) => new ResendCreateCommand(i)),
      fc.constantFrom(1, 5, 40, 40, 700, 3700).map((s) => new AdvanceClockCommand(s)),
    ],
    commandsParams(25),
  )
