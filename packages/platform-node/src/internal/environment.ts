/**
 * The environment a stdio child inherits by default (see
 * `NodeMcpStdio.defaultEnvironment`).
 *
 * @internal
 */

/** The variables a child inherits by default on POSIX systems (and every `LC_*`). */
const POSIX_DEFAULTS: ReadonlyArray<string> = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "TMPDIR",
  "TZ",
  "LANG",
  "LANGUAGE"
]

/** The variables a child inherits by default on Windows (names compared without case). */
const WINDOWS_DEFAULTS: ReadonlyArray<string> = [
  "PATH",
  "PATHEXT",
  "APPDATA",
  "LOCALAPPDATA",
  "HOMEDRIVE",
  "HOMEPATH",
  "USERPROFILE",
  "USERNAME",
  "USERDOMAIN",
  "COMPUTERNAME",
  "TEMP",
  "TMP",
  "SYSTEMDRIVE",
  "SYSTEMROOT",
  "WINDIR",
  "COMSPEC",
  "PROGRAMDATA",
  "PROGRAMFILES",
  "PROGRAMFILES(X86)",
  "PROGRAMW6432",
  "COMMONPROGRAMFILES",
  "PROCESSOR_ARCHITECTURE",
  "NUMBER_OF_PROCESSORS",
  "OS"
]

/** @internal */
export const defaultVariables = (platform: NodeJS.Platform): ReadonlyArray<string> =>
  platform === "win32" ? WINDOWS_DEFAULTS : POSIX_DEFAULTS

/** @internal */
export const defaultEnvironment = (
  source: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform
): Record<string, string> => {
  const windows = platform === "win32"
  const names = new Set(defaultVariables(platform))
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined || value.startsWith("()")) continue // unset, or an exported shell function
    const name = windows ? key.toUpperCase() : key
    if (names.has(name) || (!windows && name.startsWith("LC_"))) env[key] = value
  }
  return env
}
