/** Prints `{"url":…}` on stdout, answers `mem` lines on stdin, exits when stdin ends (see control.mjs). */
export declare const control: (url: string) => void
