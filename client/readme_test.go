package client_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeProgram holds README.md's send-and-receive program ("From
// go-amqp") equal to client/internal/sendreceive, which the build
// compiles: the README cannot show a program that does not build.
func TestReadmeProgram(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	prog, err := os.ReadFile(filepath.Join("internal", "sendreceive", "main.go"))
	require.NoError(t, err)
	require.True(t, strings.Contains(string(readme), "```\n"+string(prog)+"```\n"),
		"README.md's From go-amqp program differs from client/internal/sendreceive/main.go")
}
