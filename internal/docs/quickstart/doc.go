// Command quickstart is the server the README shows: one tool,
// Calculator.Add, served over OTC/OXP on 127.0.0.1:8080. It is a file of
// its own so that the compiler checks the README's code.
package main
