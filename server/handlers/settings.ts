// Keeps the qatStudio settings current: pulled with workspace/configuration when the client supports it,
// else taken from what didChangeConfiguration pushes; without either, the defaults.
import { DidChangeConfigurationNotification, type Connection, type InitializeParams } from 'vscode-languageserver/node';
import { defaultSettings, parseSettings, type Settings } from '../services/settings';

export class SettingsHandler {
  current: Settings = defaultSettings;
  private canPull = false;
  private canRegister = false;
  private markReady!: () => void;
  /** Settles once the first settings are known (pulled after `initialized`, or the defaults without pull). */
  readonly ready = new Promise<void>((resolve) => {
    this.markReady = resolve;
  });

  constructor(
    private connection: Connection,
    private onChange: () => void,
  ) {
    connection.onDidChangeConfiguration(async (params) => {
      if (this.canPull) await this.pull();
      else this.set(parseSettings((params.settings as { qatStudio?: unknown } | null)?.qatStudio));
    });
  }

  initialize(params: InitializeParams): void {
    this.canPull = !!params.capabilities.workspace?.configuration;
    this.canRegister = !!params.capabilities.workspace?.didChangeConfiguration?.dynamicRegistration;
    if (!this.canPull) this.markReady();
  }

  async initialized(): Promise<void> {
    if (this.canRegister)
      void this.connection.client.register(DidChangeConfigurationNotification.type, { section: 'qatStudio' });
    if (this.canPull) await this.pull();
    this.markReady();
  }

  private async pull(): Promise<void> {
    try {
      this.set(parseSettings(await this.connection.workspace.getConfiguration('qatStudio')));
    } catch (err) {
      this.connection.console.warn(`could not read qatStudio settings: ${(err as Error).message}`);
    }
  }

  private set(settings: Settings): void {
    this.current = settings;
    this.onChange();
  }
}
