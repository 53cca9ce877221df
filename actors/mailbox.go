package actors

import "github.com/asynkron/protoactor-go/actor"

// mailbox is the protoactor Mailbox of every actor of a run. It does what
// protoactor's default mailbox does on the synchronized dispatcher — system
// messages first, user messages in arrival order, suspension on a failure,
// a panic escalated to the supervisor — without what that mailbox needs for
// senders on other goroutines: no lock-free queues, atomic counters or
// closure per message. A run delivers one message at a time from the
// goroutine that executes it (Execute, Close), so its mailboxes are never
// touched by two goroutines; a delivery then costs a slice append and pop.
type mailbox struct {
	invoker    actor.MessageInvoker
	dispatcher actor.Dispatcher
	process    func() // processMessages, bound once
	user       fifo
	system     fifo
	running    bool // processMessages is on the stack: posts only queue
	suspended  bool // after a failure, until the supervisor resumes or stops
}

// newMailbox is the run's actor.MailboxProducer.
func newMailbox() actor.Mailbox {
	m := &mailbox{}
	m.process = m.processMessages
	return m
}

// PostUserMessage implements actor.Mailbox.
func (m *mailbox) PostUserMessage(msg any) {
	m.user.push(msg)
	m.schedule()
}

// PostSystemMessage implements actor.Mailbox.
func (m *mailbox) PostSystemMessage(msg any) {
	m.system.push(msg)
	m.schedule()
}

// RegisterHandlers implements actor.Mailbox.
func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.invoker, m.dispatcher = invoker, dispatcher
}

// Start implements actor.Mailbox.
func (m *mailbox) Start() {}

// UserMessageCount implements actor.Mailbox.
func (m *mailbox) UserMessageCount() int { return m.user.len() }

// schedule hands the mailbox to the dispatcher unless it is being processed
// already (a post from inside a handling, such as the supervisor's Stop
// after a failure, is processed when that handling returns).
func (m *mailbox) schedule() {
	if !m.running {
		m.running = true
		m.dispatcher.Schedule(m.process)
	}
}

// processMessages runs the mailbox until nothing it may process is left.
func (m *mailbox) processMessages() {
	for {
		m.run()
		if m.system.len() == 0 && (m.suspended || m.user.len() == 0) {
			m.running = false
			return
		}
	}
}

// run invokes queued messages, system messages first, until none is left or
// the mailbox is suspended. A panic escalates to the actor's supervisor, as
// in protoactor's default mailbox.
func (m *mailbox) run() {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			m.invoker.EscalateFailure(r, msg)
		}
	}()
	for {
		if msg = m.system.pop(); msg != nil {
			switch msg.(type) {
			case *actor.SuspendMailbox:
				m.suspended = true
			case *actor.ResumeMailbox:
				m.suspended = false
			default:
				m.invoker.InvokeSystemMessage(msg)
			}
			continue
		}
		if m.suspended {
			return
		}
		if msg = m.user.pop(); msg == nil {
			return
		}
		m.invoker.InvokeUserMessage(msg)
	}
}

// fifo is a queue of messages on a slice whose storage is reused once
// emptied: a run's mailboxes hold at most a message or two at a time.
type fifo struct {
	items []any
	head  int
}

func (q *fifo) len() int { return len(q.items) - q.head }

func (q *fifo) push(msg any) {
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	q.items = append(q.items, msg)
}

// pop returns the oldest message, or nil when the queue is empty.
func (q *fifo) pop() any {
	if q.head == len(q.items) {
		return nil
	}
	msg := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	return msg
}
