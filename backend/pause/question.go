package pause

import (
	"context"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Question is the kind of a card of 1 to 6 questions.
const Question = "question"

var question = Define(Def[QuestionRequest, QuestionAnswer]{
	Name: Question,
	Tool: Tool{
		Name: "ask_question",
		Description: "Ask the person 1 to 6 questions in ONE card and stop until they answer. Give each question suggested answers " +
			"(options, shown as buttons); they can always type something else. Your turn ends here; their answers come back " +
			"as this tool's result. Ask everything you need at once: you get one card at a time.",
		Schema: `{"type":"object","properties":{"questions":{"type":"array","description":"1 to 6 questions, shown together.","minItems":1,"maxItems":6,"items":{"type":"object","properties":{` +
			`"question":{"type":"string","description":"The full question."},` +
			`"header":{"type":"string","description":"A short label, a few words."},` +
			`"options":{"type":"array","maxItems":6,"items":{"type":"string"},"description":"Suggested answers."},` +
			`"multiple":{"type":"boolean","description":"The person may pick several options."}` +
			`},"required":["question"],"additionalProperties":false}}},"required":["questions"],"additionalProperties":false}`,
	},
	Check: (*QuestionRequest).Check,
	Summarize: func(q QuestionRequest) (string, string) {
		if len(q.Questions) == 1 {
			return "Has a question for you", q.Questions[0].Question
		}
		return fmt.Sprintf("Has %d questions for you", len(q.Questions)), q.Questions[0].Question
	},
	Reply: func(_ context.Context, q QuestionRequest, decode func(any) error, _ SetVariable) (QuestionAnswer, error) {
		var a QuestionAnswer
		if err := decode(&a); err != nil {
			return a, err
		}
		return a, q.CheckAnswer(&a)
	},
	Text: func(q QuestionRequest, a QuestionAnswer) string {
		var b strings.Builder
		b.WriteString("The person answered:\n")
		for i, it := range q.Questions {
			if i < len(a.Answers) {
				fmt.Fprintf(&b, "%d. %s\n   → %s\n", i+1, it.Question, a.Answers[i])
			}
		}
		return strings.TrimSuffix(b.String(), "\n")
	},
})

// QuestionRequest is 1 to 6 questions in one card.
type QuestionRequest struct {
	Questions []QuestionItem `json:"questions"`
}

// QuestionItem is one question with its suggested answers.
type QuestionItem struct {
	Question string   `json:"question"`
	Header   string   `json:"header"`
	Options  []string `json:"options"`
	Multiple bool     `json:"multiple"`
}

// QuestionAnswer holds one answer per question, in order.
type QuestionAnswer struct {
	Answers []string `json:"answers"`
}

// Check validates and normalises a question card.
func (q *QuestionRequest) Check() error {
	if n := len(q.Questions); n == 0 || n > MaxQuestions {
		return fault.Invalid("ask 1 to %d questions in one card (got %d); batch what you need to know, and ask the rest later", MaxQuestions, n)
	}
	for i := range q.Questions {
		it := &q.Questions[i]
		var err error
		if it.Question, err = text(fmt.Sprintf("questions[%d].question", i), it.Question, maxText, true); err != nil {
			return err
		}
		if it.Header, err = text(fmt.Sprintf("questions[%d].header", i), it.Header, maxLabel, false); err != nil {
			return err
		}
		if len(it.Options) > MaxOptions {
			return fault.Invalid("questions[%d] has %d suggested answers; give at most %d (the person can always type another)", i, len(it.Options), MaxOptions)
		}
		if it.Options == nil {
			it.Options = []string{}
		}
		for j := range it.Options {
			if it.Options[j], err = text(fmt.Sprintf("questions[%d].options[%d]", i, j), it.Options[j], maxLabel, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckAnswer validates an answer to q: one non-empty answer per question.
func (q QuestionRequest) CheckAnswer(a *QuestionAnswer) error {
	if len(a.Answers) != len(q.Questions) {
		return fault.Invalid("give one answer per question: %d questions, %d answers", len(q.Questions), len(a.Answers))
	}
	for i := range a.Answers {
		var err error
		if a.Answers[i], err = text(fmt.Sprintf("answers[%d]", i), a.Answers[i], maxAnswer, true); err != nil {
			return err
		}
	}
	return nil
}
