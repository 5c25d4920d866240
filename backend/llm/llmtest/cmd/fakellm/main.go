// Command fakellm runs the fake model server of package llmtest as a
// process, for end-to-end tests of the app. It answers both the Anthropic
// and the OpenAI wire format with llmtest.Echo and prints its base URL as
// the first line of stdout; use URL/v1 as OPENAI_BASE_URL, URL as
// ANTHROPIC_BASE_URL. -delay makes every answer wait, as a real model at
// work does (benchmarks). It stops on SIGINT or SIGTERM.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	delay := flag.Duration("delay", 0, "wait this long before each answer")
	flag.Parse()
	srv, err := llmtest.Serve(*addr)
	if err != nil {
		log.Fatal(err)
	}
	if *delay > 0 {
		srv.SetFallback(func(req llmtest.Request) llmtest.Reply {
			r := llmtest.Echo(req)
			r.Delay = *delay
			return r
		})
	}
	fmt.Println(srv.URL())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	srv.Close()
}
