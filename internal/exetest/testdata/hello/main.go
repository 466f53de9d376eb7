// Command hello prints its arguments: the program of exetest's tests.
package main

import (
	"fmt"
	"os"
)

func main() { fmt.Println(os.Args[1:]) }
