// VS Code client for the deployfit language server (`deployfit lsp`, stdio).
import * as vscode from 'vscode';
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;

function serverPath(): string {
  const configured = vscode.workspace
    .getConfiguration('deployfit')
    .get<string>('server.path', 'deployfit')
    .trim();
  return configured.length > 0 ? configured : 'deployfit';
}

function createClient(): LanguageClient {
  const command = serverPath();
  const executable = { command, args: ['lsp'], transport: TransportKind.stdio };
  const serverOptions: ServerOptions = { run: executable, debug: executable };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'deploy' },
      { scheme: 'untitled', language: 'deploy' },
    ],
    synchronize: {
      fileEvents: vscode.workspace.createFileSystemWatcher('**/*.deploy'),
    },
    outputChannel: output,
  };
  return new LanguageClient('deployfit', 'Deployfit Language Server', serverOptions, clientOptions);
}

async function startClient(): Promise<void> {
  client = createClient();
  try {
    await client.start();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    void vscode.window.showErrorMessage(
      `Deployfit: could not start the language server \`${serverPath()} lsp\`: ${message}. ` +
        'Set `deployfit.server.path` to the deployfit executable.',
    );
  }
}

async function stopClient(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) {
    try {
      // dispose() stops the server (shutdown + exit) and unregisters the client's features.
      await running.dispose();
    } catch {
      // The server may already be gone, or never started; nothing left to stop.
    }
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('Deployfit Language Server');
  context.subscriptions.push(output);

  context.subscriptions.push(
    vscode.commands.registerCommand('deployfit.restartServer', async () => {
      await stopClient();
      await startClient();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration('deployfit.server.path')) {
        await stopClient();
        await startClient();
      }
    }),
  );

  await startClient();
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
