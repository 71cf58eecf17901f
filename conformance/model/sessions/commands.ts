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
import type { Command, ScenarioName } from './world.js'

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

/**
 * Command sequences that reach the deep states on every run, before the random ones (fast-check examples):
 * two Project slots busy and a third Turn past its queue time; a cancel while a Turn waits for a slot; input,
 * close and delete while a Turn runs, then a resend of the first creation.
 */
export const deepSessionStates = (): Command[][] => [
  [
    new CreateSessionCommand('slow', 600, 3600),
    new CreateSessionCommand('slow', 600, 3600),
    new CreateSessionCommand('succeed', 30, 3600),
    new AdvanceClockCommand(40),
    new ReadAllTurnsCommand(),
    new AdvanceClockCommand(3700),
    new ReadAllTurnsCommand(),
  ],
  [
    new CreateSessionCommand('slow', 600, 3600),
    new CreateSessionCommand('slow', 600, 3600),
    new CreateSessionCommand('succeed', 600, 3600),
    new CancelTurnCommand(2),
    new AdvanceClockCommand(5),
    new ReadAllTurnsCommand(),
    new AdvanceClockCommand(700),
    new ReadAllTurnsCommand(),
  ],
  [
    new CreateSessionCommand('slow', 600, 3600),
    new AdvanceClockCommand(1),
    new AddTurnCommand(0),
    new CloseSessionCommand(0),
    new AddTurnCommand(0),
    new DeleteSessionCommand(0),
    new ResendCreateCommand(0),
    new ReadAllTurnsCommand(),
  ],
]
