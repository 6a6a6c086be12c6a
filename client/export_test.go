package client

// SenderRuns returns how many times the sender's work ran at a kick of
// SendAsync or Send.
func SenderRuns(snd *Sender) int64 { return snd.runs.Load() }
