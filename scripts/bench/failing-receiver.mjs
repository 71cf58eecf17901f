// A webhook receiver in a process of its own, as an integrator's receiver is: answers 500 to every request
// (so every delivery runs its 7 attempts) and counts them. Plain JavaScript, started by the virtual-time
// bench (scale.ts) with fork(): it listens on 127.0.0.1 only, sends {port} once listening, answers the
// message 'count' with {attempts}, and exits when its parent disconnects.
/* global process */
import { createServer } from 'node:http'

let attempts = 0
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    attempts++
    res.writeHead(500).end()
  })
})
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
process.on('message', (m) => {
  if (m === 'count') process.send({ attempts })
})
process.on('disconnect', () => {
  server.close()
  server.closeAllConnections()
})
