// Package deploy holds the files a user applies to run smoothanon on a
// cluster (dataflow/, kubernetes/, flink/) and the tests that check them
// offline: each against the schema it must follow (schemas/), and every
// image, flag and parameter it names against the smoothanon binary. It has
// no Go API.
package deploy
