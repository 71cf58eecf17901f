/** The Run command set of the model-based test (fc.commands); clock and scenario commands only on a mock. */
import fc from 'fast-check'
import { commandsParams } from '../../support/fc.js'
import { AdvanceClockCommand } from './commands/advance-clock.command.js'
import { CancelRunCommand } from './commands/cancel-run.command.js'
import { CreateRunCommand } from './commands/create-run.command.js'
import { DeleteRunCommand } from './commands/delete-run.command.js'
import { QueueScenarioCommand } from './commands/queue-scenario.command.js'
import { ReadRunCommand } from './commands/read-run.command.js'
import type { Command, QueueableScenario } from './world.js'

const index = fc.nat({ max: 1000 })
const scenario = fc.constantFrom<QueueableScenario>(
  'succeed',
  'fail',
  'slow',
  'partial',
  'missing-output',
  'needs-action',
)

export const runCommands = (virtualTime: boolean) => {
  const time: fc.Arbitrary<Command>[] = virtualTime
    ? [
        fc.constantFrom(1, 2, 3, 5, 30, 700, 3700).map((s) => new AdvanceClockCommand(s)),
        fc.constantFrom(1, 4).map((s) => new AdvanceClockCommand(s)),
        scenario.map((s) => new QueueScenarioCommand(s)),
      ]
    : []
  return fc.commands(
    [
      fc
        .tuple(
          virtualTime ? fc.option(scenario, { nil: undefined }) : fc.constant(undefined),
          fc.constantFrom(20, 600),
          fc.constantFrom(15, 60, 43_200),
        )
        .map(([s, q, d]) => new CreateRunCommand(s, q, d)),
      index.map((i) => new ReadRunCommand(i)),
      index.map((i) => new ReadRunCommand(i)),
      index.map((i) => new CancelRunCommand(i)),
      index.map((i) => new DeleteRunCommand(i)),
      ...time,
    ],
    commandsParams(25),
  )
}

/**
 * Command sequences that reach the deep states on every run, before the random ones (fast-check examples,
 * mock only: they queue scenarios and move the clock): two slots busy and a third Run past its queue time; a
 * cancel and a delete while a Run waits for a slot; a Run past its deadline.
 */
export const deepRunStates = (): Command[][] => [
  [
    new CreateRunCommand('slow', 600, 43_200),
    new CreateRunCommand('slow', 600, 43_200),
    new CreateRunCommand('succeed', 20, 43_200),
    new AdvanceClockCommand(30),
    new ReadRunCommand(2),
    new AdvanceClockCommand(3700),
    new ReadRunCommand(0),
  ],
  [
    new CreateRunCommand('slow', 600, 43_200),
    new CreateRunCommand('slow', 600, 43_200),
    new CreateRunCommand('succeed', 600, 43_200),
    new CancelRunCommand(2),
    new AdvanceClockCommand(5),
    new ReadRunCommand(2),
    new CreateRunCommand('succeed', 600, 43_200),
    new DeleteRunCommand(3),
    new AdvanceClockCommand(700),
    new ReadRunCommand(3),
  ],
  [
    new CreateRunCommand('slow', 600, 60),
    new AdvanceClockCommand(30),
    new CancelRunCommand(0),
    new AdvanceClockCommand(700),
    new ReadRunCommand(0),
    new CancelRunCommand(0),
  ],
]
