import { Argument, type Command, type Option } from 'commander';

/**
 * `flowctl completion bash|zsh`: a completion script made from commander's own command tree at the
 * moment it runs, so a command or option added anywhere completes without touching this file.
 * The script is data (a table of words per command path) plus a small fixed function.
 */

interface Node {
  /** "flows create", "" for the top level. */
  path: string;
  /** Its subcommands, and the values its arguments are limited to. */
  subcommands: string[];
  options: string[];
}

const optionWords = (options: readonly Option[]) => options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));

/** Every command path with the words that may follow it (its subcommands, its own and inherited options). */
export function commandTree(program: Command): Node[] {
  const nodes: Node[] = [];
  const walk = (command: Command, path: string[], inherited: string[]) => {
    const options = [...inherited, ...optionWords(command.options), '--help'];
    const choices = command.registeredArguments.flatMap((a) => a.argChoices ?? []);
    nodes.push({ path: path.join(' '), subcommands: [...command.commands.map((c) => c.name()), ...choices], options: [...new Set(options)] });
    // Global options (--url, --json) are accepted after any subcommand: commander passes them up.
    const passed = path.length === 0 ? optionWords(command.options.filter((o) => o.long !== '--version')) : inherited;
    for (const sub of command.commands) walk(sub, [...path, sub.name()], passed);
  };
  walk(program, [], []);
  return nodes;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bashScript(nodes: Node[]): string {
  const cases = nodes.map((n) => `    ${quote(n.path)}) words=${quote([...n.subcommands, ...n.options].join(' '))} ;;`).join('\n');
  return `# flowctl completion for bash: eval "$(flowctl completion bash)" (e.g. in ~/.bashrc)
_flowctl_words() {
  local words=''
  case "$1" in
${cases}
  esac
  printf '%s' "$words"
}
_flowctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path='' word i
  # The command path so far: the words before the cursor that name subcommands.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case " $(_flowctl_words "$path") " in
      *" $word "*) [[ "$word" != -* ]] && path="\${path:+$path }$word" ;;
    esac
  done
  COMPREPLY=($(compgen -W "$(_flowctl_words "$path")" -- "$cur"))
}
complete -o default -F _flowctl flowctl
`;
}

function zshScript(nodes: Node[]): string {
  const cases = nodes.map((n) => `    ${quote(n.path)}) words=(${[...n.subcommands, ...n.options].map(quote).join(' ')}) ;;`).join('\n');
  return `#compdef flowctl
# flowctl completion for zsh: eval "$(flowctl completion zsh)" (after compinit), or save as _flowctl in $fpath
_flowctl() {
  local path_='' word i
  local -a words_
  _flowctl_words() {
    local -a words
    case "$1" in
${cases}
    esac
    reply=("\${words[@]}")
  }
  for ((i = 2; i < CURRENT; i++)); do
    word="\${words[i]}"
    _flowctl_words "$path_"
    if [[ "$word" != -* ]] && (( \${reply[(Ie)$word]} )); then path_="\${path_:+$path_ }$word"; fi
  done
  _flowctl_words "$path_"
  words_=("\${reply[@]}")
  compadd -- "\${words_[@]}"
}
compdef _flowctl flowctl
`;
}

export function registerCompletionCommand(program: Command) {
  program
    .command('completion')
    .description('print a completion script for bash or zsh: eval "$(flowctl completion bash)"')
    .addArgument(new Argument('<shell>').choices(['bash', 'zsh']))
    .action((shell: 'bash' | 'zsh') => {
      const nodes = commandTree(program);
      process.stdout.write(shell === 'bash' ? bashScript(nodes) : zshScript(nodes));
    });
}
