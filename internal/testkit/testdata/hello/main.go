// Command hello prints its arguments: the program of testkit's TestProgram.
package main

import (
	"fmt"
	"os"
)

func main() { fmt.Println(os.Args[1:]) }
