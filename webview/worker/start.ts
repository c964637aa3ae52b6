// Imported first by the page: the layout worker starts before the rest of the page's modules run.
import { startWorker } from './client';

startWorker();
