package main

import (
	"flag"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// dateLayout is the --date format and the form {date} expands to.
const dateLayout = "2006-01-02"

// dateTemplate matches {date} and {date-N} (N days before --date).
var dateTemplate = regexp.MustCompile(`\{date(?:-(\d{1,4}))?\}`)

// dateFlag defines --date.
func dateFlag(fs *flag.FlagSet) *string {
	return fs.String("date", "", "the run's date: YYYY-MM-DD, today or yesterday (UTC, resolved once at launch); replaces {date} (and {date-N}, N days before) in the paths")
}

// resolveDate returns the day s names (YYYY-MM-DD, today or yesterday,
// relative to now in UTC); "" stays "".
func resolveDate(s string, now time.Time) (string, error) {
	now = now.UTC()
	switch s {
	case "":
		return "", nil
	case "today":
		return now.Format(dateLayout), nil
	case "yesterday":
		return now.AddDate(0, 0, -1).Format(dateLayout), nil
	}
	d, err := time.Parse(dateLayout, s)
	if err != nil || d.Format(dateLayout) != s {
		return "", usageErr("--date=%q, want YYYY-MM-DD, today or yesterday", s)
	}
	return s, nil
}

// expandDate replaces {date} and {date-N} in the value of flag name by
// date (YYYY-MM-DD) and the day N days before it. A template without
// --date, or a malformed one, is a usage error.
func expandDate(name, value, date string) (string, error) {
	if !strings.Contains(value, "{date") {
		return value, nil
	}
	if date == "" {
		return "", usageErr("--%s=%q contains {date} but --date is not set", name, value)
	}
	d, err := time.Parse(dateLayout, date)
	if err != nil {
		return "", usageErr("--date=%q, want YYYY-MM-DD", date)
	}
	out := dateTemplate.ReplaceAllStringFunc(value, func(m string) string {
		n := 0
		if sub := dateTemplate.FindStringSubmatch(m); sub[1] != "" {
			n, _ = strconv.Atoi(sub[1])
		}
		return d.AddDate(0, 0, -n).Format(dateLayout)
	})
	if strings.Contains(out, "{date") {
		return "", usageErr("--%s=%q has a malformed date template; want {date} or {date-N}", name, value)
	}
	return out, nil
}

// expandDates applies expandDate to each named flag value in place.
func expandDates(date string, vals map[string]*string) error {
	for _, name := range []string{"input", "output", "metrics_out", "pseudonym_key_out", "previous_report"} {
		v, ok := vals[name]
		if !ok {
			continue
		}
		e, err := expandDate(name, *v, date)
		if err != nil {
			return err
		}
		*v = e
	}
	return nil
}
